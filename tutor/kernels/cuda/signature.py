"""The kernels a learner's `.cu` file defines, read from their `__global__` declarations.

A launch passes each kernel its arguments in the types its parameters have: a tensor where the
parameter is a pointer (its element type must match the tensor's dtype), a number where it is
a scalar (packed as that scalar's C type). This reads the declarations, not the bodies: it
says how to call a kernel, never whether the kernel is right.

    kernels = kernels_in(source)          # {"rms_norm_kernel": Kernel(...)}
    kernels["rms_norm_kernel"].params[0]  # Param("y", pointer=True, element="bfloat16", ...)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A scalar parameter's C type -> (struct format for its bytes, what it holds).
SCALARS = {
    "int": ("i", "int"),
    "signed": ("i", "int"),
    "int32_t": ("i", "int"),
    "unsigned": ("I", "int"),
    "unsigned int": ("I", "int"),
    "uint32_t": ("I", "int"),
    "long": ("q", "int"),
    "long int": ("q", "int"),
    "long long": ("q", "int"),
    "long long int": ("q", "int"),
    "int64_t": ("q", "int"),
    "ptrdiff_t": ("q", "int"),
    "unsigned long": ("Q", "int"),
    "unsigned long long": ("Q", "int"),
    "uint64_t": ("Q", "int"),
    "size_t": ("Q", "int"),
    "float": ("f", "float"),
    "double": ("d", "float"),
    "bool": ("?", "bool"),
}
# A pointer's element type -> the torch dtypes a tensor passed there may have (None: any).
ELEMENTS = {
    "float": ("float32",),
    "float2": ("float32",),
    "float4": ("float32",),
    "double": ("float64",),
    "__nv_bfloat16": ("bfloat16",),
    "nv_bfloat16": ("bfloat16",),
    "__nv_bfloat162": ("bfloat16",),
    "__half": ("float16",),
    "half": ("float16",),
    "__half2": ("float16",),
    "int": ("int32",),
    "int32_t": ("int32",),
    "unsigned": ("int32",),
    "unsigned int": ("int32",),
    "uint32_t": ("int32",),
    "int64_t": ("int64",),
    "long long": ("int64",),
    "long": ("int64",),
    "int8_t": ("int8",),
    "char": ("int8", "uint8", "bool"),
    "signed char": ("int8",),
    "unsigned char": ("uint8", "bool"),
    "uint8_t": ("uint8", "bool"),
    "bool": ("bool",),
    "void": None,
    "int4": None,  # 16-byte vector loads of any element type
    "uint4": None,
    "int2": None,
    "uint2": None,
}
_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct)\b")
_GLOBAL = re.compile(r"\b__global__\b")
_NAME = re.compile(r"([A-Za-z_]\w*)\s*$")


@dataclass(frozen=True)
class Param:
    name: str
    text: str  # as declared, qualifiers and all
    pointer: bool
    element: str  # the pointee's type for a pointer, else the scalar's type, qualifiers removed

    @property
    def dtypes(self) -> tuple[str, ...] | None:
        """The torch dtypes a tensor for this pointer may have (None: any; () unknown type)."""
        return ELEMENTS.get(self.element, ())

    @property
    def scalar(self) -> tuple[str, str] | None:
        """(struct format, "int" | "float" | "bool") for a scalar parameter, None if unknown."""
        return None if self.pointer else SCALARS.get(self.element)


@dataclass(frozen=True)
class Kernel:
    name: str
    params: tuple[Param, ...]
    line: int  # where its `__global__` is


class SignatureError(ValueError):
    """A `__global__` declaration this reader cannot take apart; the message says which."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def without_comments(source: str) -> str:
    """`source` with comments and string contents blanked, lines and columns kept."""

    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))

    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', blank, source, flags=re.S)


def kernels_in(source: str) -> dict[str, Kernel]:
    """Every `__global__` function of `source` by name (templates are not read)."""
    text = without_comments(source)
    found: dict[str, Kernel] = {}
    for match in _GLOBAL.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        opening = text.find("(", match.end())
        # __launch_bounds__(256) sits between __global__ and the name: skip its parentheses.
        while opening != -1 and text[match.end() : opening].rstrip().endswith("__launch_bounds__"):
            opening = text.find("(", _closing(text, opening) + 1)
        if opening == -1:
            raise SignatureError("a __global__ with no parameter list", line)
        head = text[match.end() : opening]
        name = _NAME.search(head)
        if name is None:
            raise SignatureError("a __global__ function whose name cannot be read", line)
        closing = _closing(text, opening)
        if closing == -1:
            raise SignatureError(f"{name.group(1)}: its parameter list never closes", line)
        found[name.group(1)] = Kernel(
            name.group(1), tuple(_params(text[opening + 1 : closing], line)), line
        )
    return found


def _closing(text: str, opening: int) -> int:
    depth = 0
    for i in range(opening, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _params(text: str, line: int) -> list[Param]:
    if not text.strip() or text.strip() == "void":
        return []
    params = []
    for part in _split_top_level(text):
        declared = " ".join(part.split())
        if "=" in declared:
            declared = declared.split("=", 1)[0].strip()  # a default argument
        name = _NAME.search(declared.replace("*", " ").replace("&", " "))
        if name is None or "[" in declared:
            raise SignatureError(f"a parameter that cannot be read: '{declared}'", line)
        kind = declared[: declared.rfind(name.group(1))]
        pointer = "*" in kind
        element = " ".join(_QUALIFIERS.sub(" ", kind.replace("*", " ")).split())
        params.append(Param(name.group(1), declared, pointer, element))
    return params


def _split_top_level(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "(<":
            depth += 1
        elif char in ")>":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts
