"""What both code-hash scripts share: the SHA-256 of named sections, and how they write the
source file they generate."""
import hashlib
import os
import struct


def sha256_of_sections(sections):
    """Hex SHA-256 of (name, bytes) pairs in order, each framed by its name and length, so
    that moving bytes from one section to the next changes the hash."""
    digest = hashlib.sha256()
    for name, data in sections:
        digest.update(name + b"\0" + struct.pack("<Q", len(data)) + data)
    return digest.hexdigest()


def write_if_changed(path, text):
    """Writes only when the text differs, so that unchanged code relinks nothing."""
    if not os.path.exists(path) or open(path).read() != text:
        with open(path, "w") as f:
            f.write(text)
