"""The vector groups (``check``, ``codec``, ``groundtruth``, ``replay``, ``loop``, ``random``, ``shrunk``): each
module makes the vectors of one or more groups; data reads the bundled real logs they start from."""
