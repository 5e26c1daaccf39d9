package dev.dedup.release;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;

/** The checksum files of a Maven repository: lowercase hex of the digest, by file extension. */
final class Checksums {
    private static final Map<String, String> DIGESTS = Map.of("md5", "MD5", "sha1", "SHA-1");

    private Checksums() {
    }

    static String hex(String extension, byte[] content) {
        String digest = DIGESTS.get(extension);
        if (digest == null) {
            throw new IllegalArgumentException("no checksum with the extension '" + extension + "'; known: "
                    + DIGESTS.keySet());
        }
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance(digest).digest(content));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JDK has no " + digest, e);
        }
    }
}
