package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The window between the proxy accepting a client and its connection being cuttable: the proxy is still connecting
 * to the server when the test refuses and cuts. A server whose accept queue is full holds that connect open.
 */
class FaultProxyRefusalRaceTest {

    @Test
    void aConnectionStillConnectingToTheServerWhenRefusalStartsIsClosedOnceConnected() throws Exception {
        List<Socket> queued = new ArrayList<>();
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                FaultProxy proxy = FaultProxy.start("127.0.0.1", server.getLocalPort())) {
            fillAcceptQueue(server, queued);
            try (Socket client = new Socket("127.0.0.1", proxy.port())) {
                // The proxy accepted the client and now waits for the server, whose queue has no room.
                while (proxy.acceptedConnections() == 0) {
                    Thread.sleep(10);
                }
                Thread.sleep(200);
                proxy.refuseConnections(true);
                proxy.cutConnections();
                drainAcceptQueue(server);   // room again: the proxy's connect goes through

                client.setSoTimeout(15_000);
                InputStream in = client.getInputStream();
                int read;
                try {
                    read = in.read();
                } catch (SocketTimeoutException e) {
                    throw new AssertionError("the connection survived the cut: it was still being forwarded", e);
                } catch (IOException reset) {
                    read = -1;
                }
                assertThat(read).as("the client's connection ends (reset or end of stream)").isEqualTo(-1);
            }
        } finally {
            for (Socket socket : queued) {
                socket.close();
            }
        }
    }

    /** Connects until a connect is not answered: the server's accept queue is full. */
    private static void fillAcceptQueue(ServerSocket server, List<Socket> queued) throws IOException {
        for (int i = 0; i < 64; i++) {
            Socket socket = new Socket();
            try {
                socket.connect(new InetSocketAddress("127.0.0.1", server.getLocalPort()), 300);
                queued.add(socket);
            } catch (SocketTimeoutException full) {
                socket.close();
                return;
            }
        }
        throw new IllegalStateException("the server's accept queue never filled");
    }

    private static void drainAcceptQueue(ServerSocket server) {
        Thread drain = new Thread(() -> {
            while (!server.isClosed()) {
                try {
                    server.accept();    // kept open until the server closes; the test only needs the room
                } catch (IOException e) {
                    return;
                }
            }
        }, "drain");
        drain.setDaemon(true);
        drain.start();
    }
}
