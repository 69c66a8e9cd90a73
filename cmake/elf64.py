"""The sections of a little-endian ELF64 image: what the build's code-hash scripts read.

hash_variant_code.py reads the CUDA cubins embedded in a host object, hash_cpu_code.py the
host objects themselves. Only the section headers are parsed; nothing here depends on the
machine the image is for.
"""
import struct
from collections import namedtuple

# One section: its name (bytes), sh_type, sh_link, sh_info, sh_entsize and its bytes.
Section = namedtuple("Section", "name type link info entsize data")

SHT_SYMTAB = 2
SHT_RELA = 4
SYMBOL_ENTRY = struct.Struct("<IBBHQQ")  # Elf64_Sym: name, info, other, shndx, value, size
RELA_ENTRY = struct.Struct("<QQq")       # Elf64_Rela: offset, info, addend


def elf64_sections(blob, start=0, machine=None):
    """The sections of the ELF64 little-endian image at blob[start:], or None when there is
    none there, or (with `machine`) when its e_machine is another."""
    ident = blob[start:start + 16]
    if len(ident) < 16 or ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
        return None
    (e_machine,) = struct.unpack_from("<H", blob, start + 18)
    if machine is not None and e_machine != machine:
        return None
    (e_shoff,) = struct.unpack_from("<Q", blob, start + 40)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", blob, start + 58)
    headers = []
    for index in range(e_shnum):
        base = start + e_shoff + index * e_shentsize
        name, kind, _, _, offset, size, link, info, _, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", blob, base)
        headers.append((name, kind, offset, size, link, info, entsize))
    names_offset = headers[e_shstrndx][2]
    sections = []
    for name_index, kind, offset, size, link, info, entsize in headers:
        name_start = start + names_offset + name_index
        name = blob[name_start:blob.index(b"\0", name_start)]
        sections.append(Section(name, kind, link, info, entsize,
                                blob[start + offset:start + offset + size]))
    return sections
