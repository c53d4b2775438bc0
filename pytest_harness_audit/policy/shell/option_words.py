"""A command's words split into its options (with their values) and its operands."""

from __future__ import annotations


def split_options(
    args: list[str], with_value: frozenset[str], short_valued: str = ""
) -> tuple[list[str], list[str]]:
    """Split ``args`` into options (with their values) and operands (``--`` ends options).

    An option of ``with_value`` takes the next word as its value, and so does a cluster of short
    options (``-He``) that ends in a letter of ``short_valued``.
    """
    options: list[str] = []
    operands: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            operands.extend(args[index + 1 :])
            break
        if word.startswith("-") and len(word) > 1:
            options.append(word)
            valued = word in with_value or (
                short_valued != ""
                and word[1] != "-"
                and word[-1] in short_valued
                and "=" not in word
            )
            if valued and index + 1 < len(args):
                options.append(args[index + 1])
                index += 1
        else:
            operands.append(word)
        index += 1
    return options, operands
