package dev.dedup.store.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Every operation is one Lua script, so the check, the write and the reading of the server's clock are one atomic
 * step: a stale owner can never overwrite or delete the record of the owner that took over, and every expiry is
 * computed from Redis's own {@code TIME}, the clock that enforces it. Byte 1 of a record is its state, bytes 2-9
 * its expiry, bytes 10-45 (1-based, as Lua counts) its owner and byte 46 its flags (1: a result follows, 2: a
 * fingerprint follows, its length in byte 47); see {@link RedisRecord}. An expired key reads as
 * absent, so a lapsed lease fails every check. In-progress ('P') is the only state that can change; completed
 * ('C') and failed ('F') are terminal.
 */
final class RedisScripts {
    private RedisScripts() {}

    /** A script's source and the SHA-1 that EVALSHA names it by. */
    record Script(String source, String sha) {
        Script(String source) {
            this(source, sha1(source));
        }
    }

    private static final String NOW = "local t = redis.call('TIME')\n"
            + "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n";

    /**
     * One key's claim, as a Lua function of key, owner, lease ms and fingerprint (optional, 1 to 64 bytes), after
     * {@link #NOW}. Returns {1, expiry} for a fresh claim, {1, expiry, record} when the key already holds this
     * owner's claim (a resend whose first reply was lost), {0, expiry, record} for a duplicate, whose record carries
     * its fingerprint. A claim sets its key to expire at exactly the expiry it reports (PXAT), and a duplicate reports
     * the key's own (PEXPIRETIME, Redis 7.0), so both report the same millisecond; -1 for a key without a TTL.
     */
    private static final String CLAIM_KEY = "local function claim(key, owner, lease, fingerprint)\n"
            + "  local v = redis.call('GET', key)\n"
            + "  if v then\n"
            + "    local expiry = redis.call('PEXPIRETIME', key)\n"
            + "    local own = 0\n"
            + "    if string.sub(v, 1, 1) == 'P' and string.sub(v, 10, 45) == owner then own = 1 end\n"
            + "    return {own, expiry, v}\n"
            + "  end\n"
            + "  local expiry = now + tonumber(lease)\n"
            + "  local tail = '\\0'\n"
            + "  if fingerprint then tail = '\\2' .. string.char(#fingerprint) .. fingerprint end\n"
            + "  redis.call('SET', key, 'P' .. struct.pack('>i8', expiry) .. owner .. tail, 'PXAT', expiry)\n"
            + "  return {1, expiry}\n"
            + "end\n";

    /** KEYS[1] key; ARGV[1] owner, ARGV[2] lease ms, ARGV[3] the fingerprint (optional). Returns as {@link #CLAIM_KEY}. */
    static final Script CLAIM = new Script(NOW + CLAIM_KEY + "return claim(KEYS[1], ARGV[1], ARGV[2], ARGV[3])\n");

    /**
     * A batch in one call: KEYS the keys, which must share a slot on a Cluster; ARGV[1] lease ms, ARGV[1 + i] the
     * owner of KEYS[i]. Returns one reply of {@link #CLAIM_KEY} per key, in order. One script instead of one per key
     * saves the server a command dispatch and a Lua call per key, most of what a claim costs it.
     */
    static final Script CLAIM_ALL = new Script(NOW + CLAIM_KEY + "local replies = {}\n"
            + "for i, key in ipairs(KEYS) do\n"
            + "  replies[i] = claim(key, ARGV[i + 1], ARGV[1], nil)\n"
            + "end\n"
            + "return replies\n");

    /**
     * Complete, fail and extend of one key, as a Lua function of key, owner, the new state ('C', 'F' or 'P'), its
     * time to live in ms, '1' on a resend after a lost reply, and the result or error (optional), after
     * {@link #NOW}. Returns 1 when the record is this owner's in the state asked for.
     */
    private static final String REPLACE_KEY = "local function replace(key, owner, state, ttl, resend, result)\n"
            + "  local v = redis.call('GET', key)\n"
            + "  if not v or string.sub(v, 10, 45) ~= owner then return 0 end\n"
            + "  local current = string.sub(v, 1, 1)\n"
            + "  if current == 'P' then\n"
            // Keep the claim's fingerprint (flag bit 2): byte 46 the flags, byte 47 its length, then the bytes.
            + "    local flags = 0\n"
            + "    local fingerprint = ''\n"
            + "    if string.byte(v, 46) >= 2 then\n"
            + "      fingerprint = string.sub(v, 47, 47 + string.byte(v, 47))\n"
            + "      flags = 2\n"
            + "    end\n"
            + "    local tail = ''\n"
            + "    if result then\n"
            + "      tail = result\n"
            + "      flags = flags + 1\n"
            + "    end\n"
            + "    local expiry = now + tonumber(ttl)\n"
            + "    local record = state .. struct.pack('>i8', expiry) .. owner .. string.char(flags) .. fingerprint"
            + " .. tail\n"
            + "    redis.call('SET', key, record, 'PXAT', expiry)\n"
            + "    return 1\n"
            + "  end\n"
            // Only this owner's earlier attempt can have left its own record in the state asked for.
            + "  if resend == '1' and current == state then return 1 end\n"
            + "  return 0\n"
            + "end\n";

    /**
     * KEYS[1] key; ARGV[1] owner, ARGV[2] the new state, ARGV[3] its time to live in ms, ARGV[4] '1' on a resend,
     * ARGV[5] the result or error (optional). Returns as {@link #REPLACE_KEY}.
     */
    static final Script REPLACE = new Script(NOW + REPLACE_KEY
            + "return replace(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])\n");

    /**
     * The release of one key, as a Lua function of key, owner and '1' on a resend. Deletes the record if it is this
     * owner's and in progress, and returns 1. On a resend an absent key also counts: the first attempt deleted it
     * or the lease lapsed, and either way the key is free and nobody else's record was touched.
     */
    private static final String RELEASE_KEY = "local function release(key, owner, resend)\n"
            + "  local v = redis.call('GET', key)\n"
            + "  if not v then\n"
            + "    if resend == '1' then return 1 end\n"
            + "    return 0\n"
            + "  end\n"
            + "  if string.sub(v, 1, 1) ~= 'P' or string.sub(v, 10, 45) ~= owner then return 0 end\n"
            + "  redis.call('DEL', key)\n"
            + "  return 1\n"
            + "end\n";

    /** KEYS[1] key; ARGV[1] owner, ARGV[2] '1' on a resend. Returns as {@link #RELEASE_KEY}. */
    static final Script RELEASE = new Script(RELEASE_KEY + "return release(KEYS[1], ARGV[1], ARGV[2])\n");

    /** How many arguments each key of {@link #SETTLE_ALL} takes. */
    static final int SETTLE_ARGUMENTS = 5;

    /**
     * A batch of settlements in one call: KEYS the keys, which must share a slot on a Cluster; ARGV[1] '1' on a
     * resend; then five per key: owner, the end state ('C', 'F', or 'R' to release), its time to live in ms, '1' when
     * a result or error follows, and that result or error. Returns one answer of {@link #REPLACE_KEY} or
     * {@link #RELEASE_KEY} per key, in order.
     */
    static final Script SETTLE_ALL = new Script(NOW + REPLACE_KEY + RELEASE_KEY + "local answers = {}\n"
            + "for i, key in ipairs(KEYS) do\n"
            + "  local a = 1 + (i - 1) * " + SETTLE_ARGUMENTS + "\n"
            + "  if ARGV[a + 2] == 'R' then\n"
            + "    answers[i] = release(key, ARGV[a + 1], ARGV[1])\n"
            + "  else\n"
            + "    local result = nil\n"
            + "    if ARGV[a + 4] == '1' then result = ARGV[a + 5] end\n"
            + "    answers[i] = replace(key, ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[1], result)\n"
            + "  end\n"
            + "end\n"
            + "return answers\n");

    /**
     * KEYS[1] key. Reads the record and its expiry by the server's clock, writing nothing. Returns {0} when the key
     * holds nothing (an expired key reads as absent), else {1, expiry, record}; expiry is the key's PEXPIRETIME, or
     * -1 for a key without a TTL.
     */
    static final Script INSPECT = new Script("local v = redis.call('GET', KEYS[1])\n"
            + "if not v then return {0} end\n"
            + "return {1, redis.call('PEXPIRETIME', KEYS[1]), v}\n");

    /**
     * KEYS[1] key. Deletes the record whatever its state and owner; returns 1 if there was one. An expired key is
     * already absent to DEL, so it counts as none.
     */
    static final Script FORGET = new Script("return redis.call('DEL', KEYS[1])\n");

    private static String sha1(String script) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(script.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required on every Java platform", e);
        }
    }
}
