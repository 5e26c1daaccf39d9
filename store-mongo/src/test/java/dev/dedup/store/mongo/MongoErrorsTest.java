package dev.dedup.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoCredential;
import com.mongodb.MongoNotPrimaryException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoSecurityException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.WriteError;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Driver failures map to dedup's exceptions by type, label and code; no server needed. */
class MongoErrorsTest {
    private static final ServerAddress SERVER = new ServerAddress("db.internal", 27017);

    private static DedupStoreException translated(RuntimeException failure) {
        DedupException translated = MongoErrors.translate("claim", failure);
        assertThat(translated).isInstanceOf(DedupStoreException.class).hasCause(failure);
        assertThat(translated.getMessage()).startsWith("MongoDB dedup store claim failed");
        return (DedupStoreException) translated;
    }

    private static MongoCommandException command(int code, String codeName) {
        return new MongoCommandException(BsonDocument.parse("{ok: 0, code: " + code + ", codeName: '" + codeName
                + "', errmsg: 'user alice: secret detail'}"), SERVER);
    }

    @Test
    @DisplayName("network failures, timeouts, elections and write conflicts are retryable")
    void transientFailuresAreRetryable() {
        for (RuntimeException failure : List.of(
                new MongoSocketReadException("Prematurely reached end of stream", SERVER),
                new MongoTimeoutException("Timed out while waiting for a server"),
                new MongoOperationTimeoutException("Operation exceeded the timeout limit"),
                new MongoNotPrimaryException(BsonDocument.parse("{ok: 0, code: 10107, codeName: 'NotWritablePrimary'}"),
                        SERVER),
                command(189, "PrimarySteppedDown"),
                command(91, "ShutdownInProgress"),
                command(112, "WriteConflict"),
                command(50, "MaxTimeMSExpired"),
                new MongoSecurityException(MongoCredential.createCredential("app", "admin", "pw".toCharArray()),
                        "Exception authenticating", new MongoSocketReadException("reset", SERVER)))) {
            assertThat(translated(failure).isRetryable()).as(failure.getClass().getSimpleName()).isTrue();
        }
        MongoCommandException labelled = command(999, "Whatever");
        labelled.addLabel(MongoErrors.RETRYABLE_ERROR_LABEL);
        assertThat(translated(labelled).isRetryable()).isTrue();
        MongoCommandException overloaded = command(999, "Whatever");
        overloaded.addLabel(MongoErrors.SYSTEM_OVERLOADED_ERROR_LABEL);
        assertThat(translated(overloaded).isRetryable()).isTrue();
    }

    @Test
    @DisplayName("refused credentials, missing rights, validation failures and a closed client are permanent")
    void permanentFailuresAreNot() {
        for (RuntimeException failure : List.of(
                new MongoSecurityException(MongoCredential.createCredential("app", "admin", "pw".toCharArray()),
                        "Exception authenticating"),
                command(13, "Unauthorized"),
                command(18, "AuthenticationFailed"),
                new MongoWriteException(new WriteError(121, "Document failed validation", new BsonDocument()), SERVER,
                        List.of()),
                new IllegalStateException("state should be: open"))) {
            assertThat(translated(failure).isRetryable()).as(failure.getClass().getSimpleName()).isFalse();
        }
    }

    @Test
    @DisplayName("messages name the exception type only, never the server's text (which may name users or data)")
    void messagesCarryNoServerText() {
        DedupStoreException translated = translated(command(13, "Unauthorized"));

        assertThat(translated.getMessage()).isEqualTo("MongoDB dedup store claim failed permanently: "
                + "MongoCommandException").doesNotContain("alice");
    }

    @Test
    @DisplayName("dedup's own exceptions pass through unchanged")
    void dedupExceptionsPassThrough() {
        DedupConfigurationException configuration = new DedupConfigurationException("not a dedup record");

        assertThat(MongoErrors.translate("claim", configuration)).isSameAs(configuration);
    }
}
