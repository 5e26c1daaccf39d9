package dev.dedup.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The test server survives what the fault tests do to it: a client that drops a request half-sent. dynalite itself
 * stops on that (it rethrows the request's "aborted" error); the harness starts it through
 * scripts/dynalite-server.js, which keeps it running, as a real DynamoDB endpoint would.
 */
class DynaliteDroppedRequestTest {

    @Test
    @DisplayName("after three requests dropped half-sent, dynalite still answers claims")
    void survivesRequestsDroppedHalfSent() throws Exception {
        InetSocketAddress server = DynamoDbTestSupport.address();
        for (int i = 0; i < 3; i++) {
            try (Socket socket = new Socket(server.getAddress(), server.getPort())) {
                OutputStream out = socket.getOutputStream();
                out.write(("POST / HTTP/1.1\r\nHost: " + server.getHostString() + "\r\nContent-Type:"
                        + " application/x-amz-json-1.0\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n"
                        + "Content-Length: 1000\r\n\r\n{\"Limit").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                Thread.sleep(200); // the server has started reading the body when the connection goes
            }
        }

        try (DynamoDbClient client = DynamoDbTestSupport.client(Duration.ofSeconds(10))) {
            DynamoDbDedupTables.create(client, DynamoDbTestSupport.TABLE);
            DynamoDbDedupStore store = DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE)
                    .namespace("dropped-" + UUID.randomUUID().toString().substring(0, 8)).build();
            assertThat(store.claim("after", Duration.ofMinutes(1))).isInstanceOf(Claim.class);
        }
    }
}
