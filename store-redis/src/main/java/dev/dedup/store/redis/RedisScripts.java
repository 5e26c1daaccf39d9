package dev.dedup.store.redis;

/**
 * The owner-checked operations, each one Lua script so the check and the write are atomic on the server: a stale
 * owner can never overwrite or delete the record of the owner that took over. Byte 1 of a record is its state and
 * bytes 10-45 (1-based, as Lua counts) its owner; see {@link RedisRecord}. An expired key reads as absent, so a
 * lapsed lease fails every check.
 */
final class RedisScripts {
    private RedisScripts() {}

    private static final String HELD_BY_OWNER = "local v = redis.call('GET', KEYS[1])\n"
            + "if not v or string.sub(v, 1, 1) ~= 'P' or string.sub(v, 10, 45) ~= ARGV[1] then return 0 end\n";

    /** KEYS[1] key; ARGV[1] owner, ARGV[2] the new record, ARGV[3] its time to live in ms. */
    static final String REPLACE = HELD_BY_OWNER
            + "redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])\n"
            + "return 1\n";

    /** KEYS[1] key; ARGV[1] owner. */
    static final String DELETE = HELD_BY_OWNER
            + "redis.call('DEL', KEYS[1])\n"
            + "return 1\n";
}
