package dev.dedup.store.redis;

import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.tck.NetworkFaultContractTest;
import java.net.InetSocketAddress;
import java.net.URI;

/** The kit's network faults (lost and slow replies, cut, refused and black-holed connections) on a real Redis. */
class RedisNetworkFaultContractTest extends NetworkFaultContractTest {
    @Override
    protected InetSocketAddress server() {
        URI uri = URI.create(RedisTestSupport.standaloneUrl());
        return new InetSocketAddress(uri.getHost(), uri.getPort());
    }

    @Override
    protected DedupStore openStoreVia(String host, int port, String namespace) {
        return DedupStores.open("redis://" + host + ":" + port + "?namespace=" + namespace + "&timeout=1s");
    }
}
