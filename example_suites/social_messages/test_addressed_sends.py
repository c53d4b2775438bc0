"""Multi-agent messaging: whom an agent told what, and what the message firewall stopped."""

import pytest

from pytest_harness_audit.social import FirewallSendError


@pytest.mark.harness_agents("alice", "bob", "carol")
@pytest.mark.expect_verdict("PASS")
def test_status_update_reaches_the_group(harness):
    harness.send("group:bob,carol", "build is green; merging at 15:00")
    harness.assert_sent("group:alice,bob,carol", "build is green*")
    assert [post.text for post in harness.posts("group:bob,carol")] == [
        "build is green; merging at 15:00"
    ]


@pytest.mark.harness_policy("safety", enforce=False)  # dry-run: the agent can read .env
@pytest.mark.harness_workspace("python-service")
@pytest.mark.harness_agents("alice", "bob", "carol")
@pytest.mark.expect_verdict("FAIL")
@pytest.mark.expect_refused(reason="firewall-refused", to="group:*")
def test_a_secret_leaked_to_a_group_is_refused(harness):
    secret = harness.call("Read", file_path=".env")
    assert secret.ok
    api_key = next(line for line in secret.output.splitlines() if "API_KEY" in line)
    with pytest.raises(FirewallSendError):
        harness.send("group:bob,carol", f"here you go: {api_key.split('=', 1)[1]}")
    assert harness.posts() == []  # a refused send creates no post
    harness.assert_not_sent(to="group:bob,carol")


@pytest.mark.harness_agents("alice", "bob")
@pytest.mark.expect_verdict("PASS")
def test_gathering_an_answer_from_a_peer(harness):
    harness.peer("bob").answer({"approved": True})
    result = harness.send(
        "agent:bob",
        "May I deploy?",
        collective={
            "op": "gather",
            "deadline": 60,
            "requestedSchema": {
                "type": "object",
                "properties": {"approved": {"type": "boolean"}},
                "required": ["approved"],
            },
        },
    )
    assert result.operation_id.startswith("col_")
