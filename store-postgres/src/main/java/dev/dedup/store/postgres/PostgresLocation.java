package dev.dedup.store.postgres;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.postgresql.ds.common.BaseDataSource;

/** {@code host:port/database} of a DataSource, for error messages: never its user, password or parameters. */
final class PostgresLocation {
    private static final String PREFIX = "jdbc:postgresql://";

    private PostgresLocation() {}

    /** Where {@code dataSource} connects, when it is the PostgreSQL driver's or a HikariCP pool; otherwise null. */
    static String of(DataSource dataSource) {
        try {
            if (dataSource.isWrapperFor(BaseDataSource.class)) {
                return fromUrl(dataSource.unwrap(BaseDataSource.class).getUrl());
            }
        } catch (SQLException | RuntimeException e) {
            // not one we can read
        }
        if (dataSource instanceof HikariDataSource hikari) {
            return fromUrl(hikari.getJdbcUrl());
        }
        return null;
    }

    static String fromUrl(String jdbcUrl) {
        if (jdbcUrl == null || !jdbcUrl.startsWith(PREFIX)) {
            return null;
        }
        String rest = jdbcUrl.substring(PREFIX.length());
        int query = rest.indexOf('?');
        rest = query < 0 ? rest : rest.substring(0, query);
        int at = rest.lastIndexOf('@');
        return at < 0 ? rest : rest.substring(at + 1);
    }
}
