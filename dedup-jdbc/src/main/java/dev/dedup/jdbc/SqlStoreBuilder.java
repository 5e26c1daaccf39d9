package dev.dedup.jdbc;

import dev.dedup.DedupLimits;
import dev.dedup.DedupStoreException;
import dev.dedup.spi.StoreUri;
import java.time.Duration;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The settings every SQL store's builder shares, each checked at once, and the way a store opened by URI is built
 * on its own pool. A store's builder adds its table name and makes the store. Internal plumbing of dedup's SQL
 * stores: applications use the stores' builders, such as {@code PostgresDedupStore.builder(dataSource)}.
 *
 * @param <B> the store's builder
 * @param <S> the store it builds
 */
public abstract class SqlStoreBuilder<B extends SqlStoreBuilder<B, S>, S> {
    /** Where connections come from; the store never closes it. */
    protected final DataSource dataSource;
    /** The namespace every key lives in. */
    protected String namespace = DedupLimits.DEFAULT_NAMESPACE;
    /** How long one operation may take. */
    protected Duration timeout = Duration.ofSeconds(5);
    /** Runs when the store closes: closes the pool of a store opened by URI. */
    protected Runnable onClose = () -> {};
    private boolean validateSchema = true;
    private boolean createSchema;

    /**
     * Starts the settings for a store on {@code dataSource}.
     *
     * @param dataSource where connections come from (a pool, ideally)
     */
    protected SqlStoreBuilder(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * The table the store's records live in; the store's builder says which names it takes.
     *
     * @param table the table's name, optionally qualified
     * @return this builder
     * @throws dev.dedup.DedupConfigurationException if the name is not one the store can put into SQL safely
     */
    public abstract B table(String table);

    /**
     * The namespace every key lives in (default {@code default}): a column of the table, so services can share it.
     *
     * @param namespace 1 to 64 characters of {@code A-Z a-z 0-9 . _ -}
     * @return this builder
     * @throws IllegalArgumentException if {@code namespace} does not match
     */
    public final B namespace(String namespace) {
        this.namespace = DedupLimits.checkNamespace(namespace);
        return self();
    }

    /**
     * How long one operation may take before it fails with a retryable {@link DedupStoreException} (default 5 s,
     * whole seconds, as JDBC counts). The wait for a connection and for each reply are bounded by it too, whatever
     * the pool's and the driver's own settings.
     *
     * @param timeout 1 s to 10 min; a fraction of a second is rounded up
     * @return this builder
     * @throws IllegalArgumentException if {@code timeout} is out of range
     */
    public final B timeout(Duration timeout) {
        this.timeout = PooledConnections.checkTimeout(timeout);
        return self();
    }

    /**
     * Whether {@link #build()} checks the table's columns (default true; one query at start-up).
     *
     * @param validateSchema false to skip the check, for example where the user may not read the catalog
     * @return this builder
     */
    public final B validateSchema(boolean validateSchema) {
        this.validateSchema = validateSchema;
        return self();
    }

    /**
     * Whether {@link #build()} creates the store's schema (default false): the one-line set-up for a fresh database.
     * It is idempotent, so it may run at every start; where the application's database user may not create tables,
     * leave it off and run the DDL at deployment instead.
     *
     * @param createSchema true to create the schema at {@link #build()}, in place of validating it
     * @return this builder
     */
    public final B createSchema(boolean createSchema) {
        this.createSchema = createSchema;
        return self();
    }

    /**
     * Builds the store, and creates or checks its schema as configured.
     *
     * @return the store; closing it leaves the {@link DataSource} open
     * @throws dev.dedup.DedupConfigurationException if the table is missing or has other columns (the message
     *     holds the DDL to fix it)
     * @throws DedupStoreException if the database could not be reached
     */
    public final S build() {
        S store = newStore();
        if (createSchema) {
            createSchemaOf(store);
        } else if (validateSchema) {
            validateSchemaOf(store);
        }
        return store;
    }

    /**
     * Builds the store a URI describes on {@code pool}, which the store then owns and closes: the URI's
     * {@code table}, {@code namespace}, {@code timeout} and {@code createSchema}. A failure closes the pool, in the
     * background, since a pool's shutdown can wait out a connect in flight.
     *
     * @param uri the checked store URI
     * @param pool the pool the provider opened for it
     * @return the store
     */
    public final S buildOpenedBy(StoreUri uri, UriPool pool) {
        try {
            table(uri.text("table").orElseThrow()).namespace(uri.namespace()).timeout(uri.duration("timeout"))
                    .createSchema(uri.bool("createSchema"));
            onClose = pool::close;
            return build();
        } catch (RuntimeException e) {
            pool.closeInBackground();
            throw e;
        }
    }

    /** {@return this builder, as its own type} */
    protected abstract B self();

    /** {@return the store these settings describe, its schema not yet checked} */
    protected abstract S newStore();

    /**
     * Creates the store's schema: {@link #build()} with {@code createSchema(true)}.
     *
     * @param store the store just made
     */
    protected abstract void createSchemaOf(S store);

    /**
     * Checks the store's schema: {@link #build()} with {@code validateSchema(true)}, the default.
     *
     * @param store the store just made
     */
    protected abstract void validateSchemaOf(S store);
}
