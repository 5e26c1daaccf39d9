package dev.dedup.store.redis;

import dev.dedup.DedupStore;
import dev.dedup.DedupStores;

/** {@code settleAll} on the real 3-master Redis Cluster: a batch's keys spread over many slots and every master. */
class RedisClusterSettleAllTest extends RedisSettleAllContract {

    @Override
    DedupStore openStore(String namespace) {
        return openWitness(namespace);
    }

    @Override
    DedupStore openWitness(String namespace) {
        return DedupStores.open("redis-cluster://" + String.join(",", RedisTestSupport.clusterNodes())
                + "?namespace=" + namespace);
    }
}
