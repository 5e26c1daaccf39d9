package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The proxy itself, in front of a one-line echo server that counts the requests it served. */
class FaultProxyTest {
    private ServerSocket echo;
    private final AtomicInteger served = new AtomicInteger();
    private FaultProxy proxy;

    @BeforeEach
    void startEchoServerAndProxy() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(() -> {
            while (!echo.isClosed()) {
                try {
                    Socket socket = echo.accept();
                    Thread worker = new Thread(() -> serve(socket));
                    worker.setDaemon(true);
                    worker.start();
                } catch (IOException e) {
                    return;
                }
            }
        });
        acceptor.setDaemon(true);
        acceptor.start();
        proxy = FaultProxy.start("127.0.0.1", echo.getLocalPort());
    }

    @AfterEach
    void stop() throws IOException {
        proxy.close();
        echo.close();
    }

    private void serve(Socket socket) {
        try (socket; InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream()) {
            int b;
            while ((b = in.read()) >= 0) {
                served.incrementAndGet();
                out.write(b);
                out.flush();
            }
        } catch (IOException e) {
            // client gone
        }
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket(proxy.host(), proxy.port());
        socket.setSoTimeout(2_000);
        return socket;
    }

    private static int roundTrip(Socket socket, int value) throws IOException {
        socket.getOutputStream().write(value);
        socket.getOutputStream().flush();
        return socket.getInputStream().read();
    }

    @Test
    @DisplayName("without faults the proxy is transparent")
    void forwards() throws IOException {
        try (Socket socket = connect()) {
            assertThat(roundTrip(socket, 7)).isEqualTo(7);
            assertThat(roundTrip(socket, 8)).isEqualTo(8);
        }
    }

    @Test
    @DisplayName("a lost reply reaches the server, never the client, and cuts the connection")
    void losesAReplyAfterTheServerActed() throws IOException {
        try (Socket socket = connect()) {
            proxy.loseNextReply();
            int read;
            try {
                read = roundTrip(socket, 9);
            } catch (IOException reset) {
                read = -1;
            }
            assertThat(read).isEqualTo(-1);
        }
        assertThat(served).hasValue(1);
        assertThat(proxy.lostReplies()).isEqualTo(1);
        try (Socket again = connect()) {
            assertThat(roundTrip(again, 10)).isEqualTo(10);
        }
    }

    @Test
    @DisplayName("delayed replies arrive late but intact")
    void delaysReplies() throws IOException {
        proxy.delayReplies(Duration.ofMillis(300));
        try (Socket socket = connect()) {
            long start = System.nanoTime();
            assertThat(roundTrip(socket, 11)).isEqualTo(11);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        }
    }

    @Test
    @DisplayName("refused and black-holed connections never reach the server; heal restores service")
    void refusesAndBlackHoles() throws IOException {
        proxy.refuseConnections(true);
        try (Socket socket = connect()) {
            assertThatThrownBy(() -> {
                if (roundTrip(socket, 1) < 0) {
                    throw new IOException("closed");
                }
            }).isInstanceOf(IOException.class);
        }
        proxy.heal();
        proxy.blackHole(true);
        try (Socket socket = connect()) {
            socket.setSoTimeout(300);
            assertThatThrownBy(() -> roundTrip(socket, 2)).isInstanceOf(SocketTimeoutException.class);
        }
        assertThat(served).hasValue(0);
        proxy.heal();
        try (Socket socket = connect()) {
            assertThat(roundTrip(socket, 3)).isEqualTo(3);
        }
    }

    @Test
    @DisplayName("cutting connections breaks the open ones; new ones work")
    void cutsConnections() throws IOException {
        try (Socket socket = connect()) {
            assertThat(roundTrip(socket, 4)).isEqualTo(4);
            proxy.cutConnections();
            int read;
            try {
                read = roundTrip(socket, 5);
            } catch (IOException reset) {
                read = -1;
            }
            assertThat(read).isEqualTo(-1);
        }
        try (Socket socket = connect()) {
            assertThat(roundTrip(socket, 6)).isEqualTo(6);
        }
    }
}
