"""A small Dockerfile reader for the checks: stages, their instructions,
ENV values and the exec-form (JSON) command lines."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple


@dataclass
class Stage:
    name: str
    base: str
    instructions: List[Tuple[str, str]] = field(default_factory=list)  # (KEYWORD, rest)

    def all(self, keyword: str) -> List[str]:
        return [rest for k, rest in self.instructions if k == keyword]

    def last(self, keyword: str) -> Optional[str]:
        found = self.all(keyword)
        return found[-1] if found else None

    def env(self) -> Dict[str, str]:
        out: Dict[str, str] = {}
        for rest in self.all("ENV"):
            for token in shlex.split(rest):
                if "=" in token:
                    k, v = token.split("=", 1)
                    out[k] = v
        return out

    def exec_form(self, keyword: str) -> List[str]:
        """ENTRYPOINT/CMD in JSON form (the checks require it)."""
        rest = self.last(keyword)
        if rest is None:
            return []
        value = json.loads(rest)
        assert isinstance(value, list) and all(isinstance(v, str) for v in value), rest
        return value

    def command_line(self) -> List[str]:
        return self.exec_form("ENTRYPOINT") + self.exec_form("CMD")

    def healthcheck(self) -> List[str]:
        rest = self.last("HEALTHCHECK") or ""
        m = re.search(r"\bCMD\s+(\[.*\])\s*$", rest, re.S)
        assert m, f"HEALTHCHECK of stage {self.name} is not in JSON form: {rest!r}"
        return json.loads(m.group(1))


def logical_lines(text: str) -> List[str]:
    lines, current = [], ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if current and stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        lines.append(current + stripped)
        current = ""
    if current:
        lines.append(current)
    return lines


def parse(path: Path) -> Dict[str, Stage]:
    stages: Dict[str, Stage] = {}
    current: Optional[Stage] = None
    for line in logical_lines(path.read_text()):
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            parts = rest.split()
            name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else f"stage{len(stages)}"
            current = Stage(name, parts[0])
            stages[name] = current
        elif current is not None:
            current.instructions.append((keyword, rest.strip()))
    return stages


def global_args(path: Path) -> Dict[str, str]:
    """ARGs before the first FROM, with their defaults."""
    out: Dict[str, str] = {}
    for line in logical_lines(path.read_text()):
        if line.upper().startswith("FROM "):
            break
        if line.upper().startswith("ARG "):
            k, _, v = line[4:].strip().partition("=")
            out[k] = v.strip('"')
    return out
