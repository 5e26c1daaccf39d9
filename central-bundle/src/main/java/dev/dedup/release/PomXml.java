package dev.dedup.release;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.SAXException;

/** The few reads of a POM's XML that the bundle needs: direct children only, so a profile's modules never count. */
final class PomXml {
    private PomXml() {
    }

    static Element parse(byte[] pom) throws IOException {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            return factory.newDocumentBuilder().parse(new ByteArrayInputStream(pom)).getDocumentElement();
        } catch (ParserConfigurationException | SAXException e) {
            throw new IOException("not a readable POM: " + e.getMessage(), e);
        }
    }

    /** The first child element named {@code name}, or null (also when {@code parent} is null). */
    static Element child(Element parent, String name) {
        List<Element> found = children(parent, name);
        return found.isEmpty() ? null : found.get(0);
    }

    /** The child elements named {@code name}; none when {@code parent} is null. */
    static List<Element> children(Element parent, String name) {
        List<Element> found = new ArrayList<>();
        if (parent == null) {
            return found;
        }
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element && name.equals(node.getNodeName())) {
                found.add((Element) node);
            }
        }
        return found;
    }

    /** The trimmed text of the child named {@code name}, or null when it is missing or blank. */
    static String text(Element parent, String name) {
        Element child = child(parent, name);
        String text = child == null ? "" : child.getTextContent().trim();
        return text.isEmpty() ? null : text;
    }
}
