"""Fictional projects and TextForge, which writes a project's prose, reports, code and shell output."""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass

from measure.synth.vocab import (ADJS, CODE_TEMPLATES, DESCRIPTIONS, DIRS, EXT, HEADINGS, HEX, HUMAN_PROMPTS, NON_ASCII,
                                 NOUNS, OPENERS, PAST, SENTENCES, SEVERITY, TYPE_NAMES, USERS, VERBS)

_SLOT = re.compile(r"\{\{|\}\}|\{([A-Za-z0-9]+)\}")


def fill_template(template: str, slot) -> str:
    """`template` with each `{X}` replaced by `slot("X")`, left to right; `{{` and `}}` are literal braces."""
    return _SLOT.sub(lambda m: m.group()[0] if m.group(1) is None else slot(m.group(1)), template)


def _snake(rng: random.Random, k: int) -> str:
    return "_".join(rng.choice(VERBS if i == 0 else NOUNS) for i in range(k))


def _camel(rng: random.Random, k: int) -> str:
    return "".join(rng.choice(NOUNS).replace("_", " ").title().replace(" ", "") for _ in range(k))


@dataclass(frozen=True)
class Project:
    """One fictional repository a session works in."""

    name: str
    language: str
    user: str
    cwd: str
    slug: str
    branches: tuple[str, ...]
    files: tuple[str, ...]
    functions: tuple[str, ...]
    types: tuple[str, ...]
    variables: tuple[str, ...]
    tests: tuple[str, ...]
    module: str


def make_project(rng: random.Random, name: str, language: str, user: str | None = None,
                 cwd: str | None = None) -> Project:
    user = user or rng.choice(USERS)
    if cwd is None:
        cwd = rng.choice((f"/Users/{user}/src/{name}", f"/home/{user}/projects/{name}",
                          f"/Users/{user}/work/{name}"))
    pkg = name.replace("-", "_")
    # Identifiers are drawn per project so two projects rarely share vocabulary.
    functions = tuple(sorted({_snake(rng, rng.choice((2, 2, 3))) for _ in range(260)}))
    if language in ("typescript", "go"):
        functions = tuple(f.split("_")[0] + "".join(p.title() for p in f.split("_")[1:]) for f in functions)
    types = tuple(sorted({_camel(rng, rng.choice((1, 2, 2, 3))) for _ in range(140)}))
    variables = tuple(sorted({rng.choice(NOUNS).split("_")[0] + rng.choice(("", "s", "_id", "_map", "_ref", "_count"))
                              for _ in range(120)}))
    files = set()
    while len(files) < 90:
        d = rng.choice(DIRS[language]).format(p=pkg, n=rng.choice(NOUNS).split("_")[0], m=rng.choice(NOUNS).split("_")[0])
        stem = _snake(rng, rng.choice((1, 2))) if language != "typescript" else _snake(rng, 2).replace("_", "-")
        if "test" in d:
            stem = {"go": stem + "_test", "python": "test_" + stem, "typescript": stem + ".test",
                    "elixir": stem + "_test", "rust": stem}[language]
        files.add(f"{d}/{stem}" + (".exs" if "test" in d and language == "elixir" else EXT[language]))
    files.update({"README.md", "Makefile", ".github/workflows/ci.yml", "CLAUDE.md",
                  {"go": "go.mod", "python": "pyproject.toml", "typescript": "package.json",
                   "elixir": "mix.exs", "rust": "Cargo.toml"}[language]})
    tests = tuple(sorted({"Test" + _camel(rng, 2) if language == "go" else "test_" + _snake(rng, 2)
                          for _ in range(40)}))
    branches = ("main",) + tuple(sorted({f"{rng.choice(USERS)}/{_snake(rng, 2).replace('_', '-')}" for _ in range(6)}))
    # The slug is Claude Code's project directory name: every non-alphanumeric character becomes '-'.
    return Project(name=name, language=language, user=user, cwd=cwd, slug=re.sub(r"[^A-Za-z0-9]", "-", cwd),
                   branches=branches, files=tuple(sorted(files)), functions=functions,
                   types=types, variables=variables, tests=tests, module=pkg)


def _until(target: int, make, sep: int = 1) -> list[str]:
    """Pieces from `make()` until they add up to `target` characters (each counted with `sep` more)."""
    out: list[str] = []
    size = 0
    while size < target:
        out.append(make())
        size += len(out[-1]) + sep
    return out


class TextForge:
    """Builds coding-agent text (prose, reports, code, shell output) for one project."""

    def __init__(self, rng: random.Random, project: Project, body_scale: float = 1.0):
        self.rng = rng
        self.body_scale = body_scale
        self.p = project
        # The slots of sentence and code templates that are one word of a pool.
        self.words = {"V": VERBS, "D": PAST, "A": ADJS, "P": project.files, "F": project.functions, "O": OPENERS,
                      "B": project.branches}
        self.code_words = {"f": project.functions, "F": project.functions, "T": project.types,
                           "t": TYPE_NAMES[project.language], "v": project.variables, "V": project.variables}
        # File bodies are generated once per path: re-reading a file returns the same text,
        # as in a real session (and Edit results quote the original file).
        self.file_cache: dict[str, list[str]] = {}

    # -- slots --------------------------------------------------------------------------
    def _slot(self, key: str) -> str:
        """A sentence slot filled in (vocab.toml lists the slots above `sentences`)."""
        r = self.rng
        if key in ("N", "M"):
            return r.choice(NOUNS).replace("_", " ")
        if key == "T":
            return r.choice(self.p.tests) if r.random() < 0.3 else r.choice(self.p.types)
        if key in ("L", "K"):
            return str(r.randint(3, 900) if key == "L" else r.randint(2, 40))
        return r.choice(self.words[key])

    def sentence(self) -> str:
        s = fill_template(self.rng.choice(SENTENCES), self._slot)
        if self.rng.random() < 0.02:  # a non-ASCII word or symbol
            s = s[:-1] + " " + self.rng.choice(NON_ASCII) + s[-1]
        return s

    def prose(self, target: int) -> str:
        """Paragraphs of sentences until about `target` characters."""
        return "\n\n".join(_until(target, lambda: " ".join(self.sentence() for _ in range(self.rng.randint(1, 4))), sep=2))

    def short(self) -> str:
        """One or two sentences: the typical assistant line between tool calls."""
        r = self.rng
        if r.random() < 0.55:
            return f"{r.choice(OPENERS)} `{r.choice(self.p.files if r.random() < 0.6 else self.p.functions)}`" + r.choice((".", ":", " first."))
        return " ".join(self.sentence() for _ in range(r.randint(1, 2)))

    def human(self) -> str:
        r = self.rng
        s = fill_template(r.choice(HUMAN_PROMPTS), self._slot)
        if r.random() < 0.25:
            s += "\n\n" + self.prose(r.choice((80, 200, 400)))
        if r.random() < 0.05:
            s += "\n\n```\n" + self.shell(r.randint(300, 1500)) + "\n```"
        return s

    def description(self) -> str:
        d = fill_template(self.rng.choice(DESCRIPTIONS), self._slot)
        return d[0].upper() + d[1:]

    # -- structured text ----------------------------------------------------------------
    def report(self, target: int, title: str) -> str:
        """A markdown review/exploration report, the typical subagent final answer."""
        r = self.rng
        out = [r.choice(("", "Based on my review, here is the summary.\n\n", "I have finished the analysis.\n\n")) + f"## {title}\n"]
        size = len(out[0])
        headings = list(HEADINGS)
        r.shuffle(headings)
        cycle = itertools.cycle(headings)
        while size < target:
            block = [f"\n### {next(cycle)}\n"]
            kind = r.random()
            if kind < 0.45:
                for _ in range(r.randint(2, 6)):
                    block.append(f"- **{r.choice(SEVERITY)}** `{r.choice(self.p.files)}:{r.randint(3, 900)}` — {self.sentence()}")
            elif kind < 0.7:
                block.append(self.prose(r.randint(200, 700)))
            elif kind < 0.85:
                fence = "```" + ("ts" if self.p.language == "typescript" else self.p.language)
                block += [self.sentence(), fence, *self.code_lines(r.randint(4, 14)), "```"]
            else:
                block.append("| File | Issue | Severity |\n|---|---|---|")
                for _ in range(r.randint(2, 6)):
                    block.append(f"| `{r.choice(self.p.files)}` | {r.choice(ADJS)} {r.choice(NOUNS).replace('_', ' ')} | {r.choice(SEVERITY)} |")
            out.append("\n".join(block))
            size += len(out[-1])
        return "\n".join(out)

    def _code_slot(self, key: str) -> str:
        """A code template slot filled in: f/F function, T type, t builtin type, v/V variable, w word,
        n number, c comment sentence, r receiver, P2 module."""
        r = self.rng
        if key in self.code_words:
            return r.choice(self.code_words[key])
        if key == "r":
            return self.p.types[0][0].lower()
        if key == "w":
            return r.choice(NOUNS).replace("_", " ")
        if key == "n":
            return str(r.randint(1, 512))
        return self.sentence() if key == "c" else self.p.module.title().replace("_", "")

    def code_lines(self, n: int) -> list[str]:
        """About `n` lines of code in the project's language, as whole blocks."""
        r = self.rng
        code = CODE_TEMPLATES[self.p.language]
        lines: list[str] = []
        while len(lines) < n:
            lines.extend(fill_template(r.choice(code["open"]), self._code_slot).split("\n"))
            for _ in range(r.randint(1, 6)):
                lines.extend(fill_template(r.choice(code["body"]), self._code_slot).split("\n"))
            lines.extend(fill_template(r.choice(code["close"]), self._code_slot).split("\n"))
            lines.append("")
        return lines[:max(1, n)]

    def file_body(self, path: str) -> list[str]:
        body = self.file_cache.get(path)
        if body is None:
            n = int(self.rng.lognormvariate(4.2, 0.8) * self.body_scale)  # median ~65 lines, long tail
            body = self.code_lines(max(8, min(n, 1400)))
            if len(self.file_cache) < 400:  # bound memory on huge sessions
                self.file_cache[path] = body
        return body

    def _test_line(self) -> str:
        """One line of the project's test runner output."""
        r = self.rng
        p = self.p
        if p.language == "go":
            return (f"ok  \tgithub.com/{p.user}/{p.name}/{r.choice(p.files).rsplit('/', 1)[0]}\t{r.random():.3f}s"
                    if r.random() < 0.8 else f"--- FAIL: {r.choice(p.tests)} ({r.random():.2f}s)\n    {r.choice(p.files)}:{r.randint(3, 400)}: {self.sentence()}")
        if p.language == "python":
            return (f"{r.choice(p.files)} {''.join(r.choice('....F.s') for _ in range(r.randint(3, 30)))} [{r.randint(1, 100):>3}%]"
                    if r.random() < 0.85 else f"FAILED {r.choice(p.files)}::{r.choice(p.tests)} - AssertionError: {self.sentence()}")
        if p.language == "elixir":
            return (f"  {r.randint(1, 40)}) test {r.choice(VERBS)} {r.choice(NOUNS)} ({p.module.title()}.{r.choice(p.types)}Test)\n     {r.choice(p.files)}:{r.randint(3, 400)}\n     {self.sentence()}"
                    if r.random() < 0.3 else "." * r.randint(10, 80))
        return f" {'✓' if r.random() < 0.85 else '✗'} {r.choice(p.files)} > {r.choice(VERBS)} {r.choice(NOUNS)} {r.choice(ADJS)} [{r.randint(1, 900)}ms]"

    def shell(self, target: int, kind: str = "") -> str:
        """Shell output of a plausible command (tests, git, diff, grep, build, ls, wc, gh)."""
        r = self.rng
        p = self.p
        if kind == "ls":
            return "\n".join(_until(target, lambda: (
                f"{r.choice(('-rw-r--r--', '-rw-r--r--', 'drwxr-xr-x', '-rwxr-xr-x'))}  1 {p.user}  staff  {r.randint(64, 90_000):>6} "
                f"{r.choice(('Jan', 'Feb', 'Mar', 'Aug'))} {r.randint(1, 28):>2} {r.randint(0, 23):02d}:{r.randint(0, 59):02d} "
                f"{r.choice(p.files).rsplit('/', 1)[-1]}")))
        if kind == "wc":
            files = [r.choice(p.files) for _ in range(r.randint(1, 4))]
            counts = [r.randint(10, 1500) for _ in files]
            return "\n".join(f"{c:>8} {f}" for c, f in zip(counts, files)) + (f"\n{sum(counts):>8} total" if len(files) > 1 else "")
        if kind == "pr":
            return (f"{{\"title\":\"{self.description()}\",\"body\":\"{self.sentence()}\",\"files\":["
                    + ",".join(f"{{\"path\":\"{r.choice(p.files)}\",\"additions\":{r.randint(0, 300)},\"deletions\":{r.randint(0, 200)}}}"
                               for _ in range(r.randint(1, 8))) + "]}")
        # The default is drawn even when `kind` names the output.
        pick = {"test": 0.1, "gitlog": 0.4, "diff": 0.5, "grep": 0.7, "build": 0.9}.get(kind, r.random())
        if pick < 0.3:
            out = _until(target, self._test_line)
            out.append(f"\n{r.randint(20, 900)} passed, {r.randint(0, 4)} failed in {r.random() * 30:.2f}s")
        elif pick < 0.45:  # git log / status
            out = _until(target, lambda: (
                f"{''.join(r.choice(HEX) for _ in range(7))} {r.choice(VERBS).title()} {r.choice(ADJS)} {r.choice(NOUNS).replace('_', ' ')} in {r.choice(p.files).rsplit('/', 1)[-1]}"
                if r.random() < 0.6 else f"\tmodified:   {r.choice(p.files)}"))
        elif pick < 0.6:  # diff
            out = []
            size = 0
            while size < target:
                path = r.choice(p.files)
                out.append(f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -{r.randint(1, 400)},{r.randint(3, 12)} +{r.randint(1, 400)},{r.randint(3, 12)} @@")
                out += [r.choice(" +-  ") + line for line in self.code_lines(r.randint(3, 12))]
                size += sum(len(x) for x in out[-6:])
        elif pick < 0.8:  # grep -n
            out = _until(target, lambda: f"{r.choice(p.files)}:{r.randint(1, 900)}:{self.code_lines(1)[0].strip()}")
        else:  # build / lint / log
            out = _until(target, lambda: r.choice((
                f"warning: {r.choice(ADJS)} {r.choice(NOUNS).replace('_', ' ')} in `{r.choice(p.functions)}`\n  --> {r.choice(p.files)}:{r.randint(1, 900)}:{r.randint(1, 80)}",
                f"[{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{r.randint(0, 999):03d}] {r.choice(('info', 'debug', 'warn', 'error'))} {r.choice(p.functions)}: {self.sentence()}",
                f"Compiling {r.randint(1, 60)} files ({EXT[p.language]})",
                f"error: {self.sentence()}\n   │\n {r.randint(1, 900)} │ {self.code_lines(1)[0].strip()}\n   │ {'^' * r.randint(3, 20)}",
            )))
        return "\n".join(out)
