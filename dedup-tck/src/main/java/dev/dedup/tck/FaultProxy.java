package dev.dedup.tck;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy in front of a real server that injects the network faults a store must survive: a reply lost after
 * the server acted on the request, slow replies, cut connections, refused connections and a server that accepts
 * but never answers. Point the store's client at {@link #host()}:{@link #port()} instead of the server.
 *
 * <pre>{@code
 * try (FaultProxy proxy = FaultProxy.start("127.0.0.1", 6379)) {
 *     DedupStore store = openStoreOn(proxy.port());
 *     proxy.loseNextReply();          // the server runs the claim, the client never hears back
 *     ClaimResult result = store.claim(key, lease);
 * }
 * }</pre>
 *
 * <p>Each connection is two pump threads; this is test tooling, sized for a handful of connections.
 */
public final class FaultProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private final AtomicInteger repliesToLose = new AtomicInteger();
    private final AtomicInteger lostReplies = new AtomicInteger();
    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicLong replyDelayMillis = new AtomicLong();
    private volatile boolean refusing;
    private volatile boolean blackHole;
    private volatile boolean closed;

    private FaultProxy(ServerSocket listener, InetSocketAddress target) {
        this.listener = listener;
        this.target = target;
    }

    /**
     * Starts a proxy on a free loopback port, forwarding to {@code targetHost:targetPort}.
     *
     * @param targetHost the real server's host, such as a container's mapped host
     * @param targetPort the real server's port
     * @return the running proxy, transparent until a fault is set; close it after the test
     * @throws UncheckedIOException if no loopback port can be bound
     */
    public static FaultProxy start(String targetHost, int targetPort) {
        try {
            ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            FaultProxy proxy = new FaultProxy(listener, new InetSocketAddress(targetHost, targetPort));
            Thread acceptor = new Thread(proxy::acceptLoop, "fault-proxy-accept-" + listener.getLocalPort());
            acceptor.setDaemon(true);
            acceptor.start();
            return proxy;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the fault proxy", e);
        }
    }

    /** {@return the loopback address the proxy listens on, such as {@code 127.0.0.1}: the store's host} */
    public String host() {
        return listener.getInetAddress().getHostAddress();
    }

    /** {@return the proxy's port: the store's port instead of the server's} */
    public int port() {
        return listener.getLocalPort();
    }

    /**
     * The next reply the server sends (on any connection) is swallowed and that connection is cut: the server has
     * acted on the request, the client sees a broken connection and must retry or give up.
     */
    public void loseNextReply() {
        repliesToLose.incrementAndGet();
    }

    /** {@return how many replies were swallowed so far, to check that a fault was really injected} */
    public int lostReplies() {
        return lostReplies.get();
    }

    /** {@return how many client connections the proxy accepted so far, refused and black-holed ones included} */
    public int acceptedConnections() {
        return accepted.get();
    }

    /**
     * Holds every reply for {@code delay} before passing it on.
     *
     * @param delay how long each reply waits, counted in whole milliseconds; {@link Duration#ZERO} restores normal
     *     speed
     */
    public void delayReplies(Duration delay) {
        replyDelayMillis.set(delay.toMillis());
    }

    /** Cuts every open connection at once (a reset), as a crashed peer or a dropped network path would. */
    public void cutConnections() {
        for (Connection connection : connections) {
            connection.close();
        }
    }

    /**
     * While on, new connections are reset as soon as they are accepted (a server that is down).
     *
     * @param refuse true to refuse new connections, false to accept them again; open connections are not touched
     */
    public void refuseConnections(boolean refuse) {
        this.refusing = refuse;
    }

    /**
     * While true, new connections are accepted but nothing is forwarded either way (a server that takes TCP and
     * never answers).
     *
     * @param swallow true to black-hole new connections, false to forward them again; open connections are not
     *     touched
     */
    public void blackHole(boolean swallow) {
        this.blackHole = swallow;
    }

    /** Back to a transparent proxy: no delay, no refusals, no black hole, no reply pending to be lost. */
    public void heal() {
        repliesToLose.set(0);
        replyDelayMillis.set(0);
        refusing = false;
        blackHole = false;
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException e) {
            // closing anyway
        }
        cutConnections();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            accepted.incrementAndGet();
            if (refusing) {
                reset(client);
                continue;
            }
            Socket server = new Socket();
            try {
                server.connect(target, 5_000);
            } catch (IOException e) {
                reset(client);
                continue;
            }
            Connection connection = new Connection(client, server);
            connections.add(connection);
            if (refusing) {
                // Refused while it was being connected, before it was in the set: cutConnections missed it.
                connection.close();
                continue;
            }
            if (!blackHole) {
                connection.pump(client, server, false);
                connection.pump(server, client, true);
            }
        }
    }

    private static void reset(Socket socket) {
        try {
            socket.setSoLinger(true, 0);
            socket.close();
        } catch (IOException e) {
            // already gone
        }
    }

    /** One client connection and its own connection to the server. */
    private final class Connection {
        private final Socket client;
        private final Socket server;

        Connection(Socket client, Socket server) {
            this.client = client;
            this.server = server;
        }

        void pump(Socket from, Socket to, boolean replies) {
            Thread thread = new Thread(() -> copy(from, to, replies),
                    "fault-proxy-" + (replies ? "reply-" : "request-") + from.getPort());
            thread.setDaemon(true);
            thread.start();
        }

        private void copy(Socket from, Socket to, boolean replies) {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    if (replies && takeReplyToLose()) {
                        lostReplies.incrementAndGet();
                        close();
                        return;
                    }
                    long delay = replies ? replyDelayMillis.get() : 0;
                    if (delay > 0) {
                        Thread.sleep(delay);
                    }
                    out.write(buffer, 0, read);
                    out.flush();
                }
            } catch (SocketException e) {
                // cut, by us or by a peer
            } catch (IOException e) {
                // the other side went away
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                close();
            }
        }

        private boolean takeReplyToLose() {
            int pending;
            do {
                pending = repliesToLose.get();
                if (pending == 0) {
                    return false;
                }
            } while (!repliesToLose.compareAndSet(pending, pending - 1));
            return true;
        }

        void close() {
            connections.remove(this);
            reset(client);
            reset(server);
        }
    }
}
