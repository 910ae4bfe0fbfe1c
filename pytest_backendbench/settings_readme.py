"""The README's settings table, generated from config.py's settings table.

``python -m pytest_backendbench.settings_readme`` prints it; ``--write README.md`` replaces the
block between the markers (tests/test_config.py checks that the README's copy is current).
"""

from __future__ import annotations

from collections.abc import Iterable

from .config import GROUP_TITLES, Setting, all_settings
from .setting_values import shown_default


def markdown_table(settings: Iterable[Setting]) -> str:
    """The README's options table, one section per group."""
    by_group: dict[str, list[Setting]] = {}
    for setting in settings:
        by_group.setdefault(setting.group, []).append(setting)
    lines: list[str] = []
    for group, members in by_group.items():
        lines += [f"**{GROUP_TITLES.get(group, group)}**", "", "| option | env | ini | default | meaning |", "|---|---|---|---|---|"]
        for s in members:
            default = f"`{s.default}`" if shown_default(s.default) else ""
            cells = [f"`{s.option}`" if s.option else "", f"`{s.env_var}`" if s.env_var else "", f"`{s.ini_key}`" if s.ini_key else "", default]
            lines.append("| " + " | ".join([*cells, s.help.replace("|", "\\|")]) + " |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


README_BEGIN = "<!-- settings-table:begin (generated: python -m pytest_backendbench.settings_readme) -->"
README_END = "<!-- settings-table:end -->"


def readme_with_table(text: str, table: str) -> str:
    """``text`` (the README) with the block between the settings-table markers replaced."""
    start, end = text.find(README_BEGIN), text.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"README has no settings table markers ({README_BEGIN} ... {README_END})")
    return text[: start + len(README_BEGIN)] + "\n\n" + table + "\n" + text[end:]


def main(argv: list[str] | None = None) -> None:
    """Print the README's options table, or with ``--write README.md`` update it in place."""
    import sys
    from pathlib import Path

    args = sys.argv[1:] if argv is None else argv
    table = markdown_table(all_settings())
    if len(args) == 2 and args[0] == "--write":
        path = Path(args[1])
        path.write_text(readme_with_table(path.read_text(encoding="utf-8"), table), encoding="utf-8")
        return
    print(table, end="")


if __name__ == "__main__":
    main()
