"""C++ literals for the test-data headers the make_*_test_data.py scripts
write."""
import numpy as np


def floats(values, indent="    "):
    """The values as float literals on lines of at most 100 columns."""
    lines, line = [], indent
    for v in np.asarray(values, np.float32).ravel():
        text = "%.9g" % v
        if "." not in text and "e" not in text:
            text += ".0"
        item = text + "f,"
        if line != indent and len(line) + 1 + len(item) > 100:
            lines.append(line)
            line = indent
        line += item if line == indent else " " + item
    lines.append(line)
    return "\n" + "\n".join(lines)
