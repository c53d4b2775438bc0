"""``utc_timestamp`` gives the UTC ISO-8601 millisecond stamp of any time, whatever it cached."""

from __future__ import annotations

import datetime as dt
import threading

from hypothesis import given
from hypothesis import strategies as st

from pytest_harness_audit.audit.clock import utc_timestamp


def _expected(now: float) -> str:
    millis = int(now * 1000)
    moment = dt.datetime.fromtimestamp(millis // 1000, dt.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{millis % 1000:03d}Z"


@given(st.lists(st.floats(min_value=0, max_value=4e9), min_size=1, max_size=20))
def test_every_stamp_is_the_utc_text_of_its_time(times):
    # Runs of equal, same-second and far-apart times go through every cache transition.
    for now in times + times[::-1] + [times[0], times[0] + 0.0001, times[0] + 1]:
        assert utc_timestamp(now) == _expected(now)


def test_the_current_time_is_stamped_in_utc_with_z():
    before = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    stamp = utc_timestamp()
    after = dt.datetime.now(dt.timezone.utc)
    parsed = dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.timezone.utc)
    assert before <= parsed <= after and len(stamp) == 24


def test_threads_never_mix_one_seconds_text_with_another():
    wrong: list[tuple[float, str]] = []
    times = [1_000_000_000 + second + 0.001 * step for second in range(50) for step in (0, 7)]

    def stamp_all(offset: int) -> None:
        for now in times[offset:] + times[:offset]:
            stamp = utc_timestamp(now)
            if stamp != _expected(now):
                wrong.append((now, stamp))

    workers = [threading.Thread(target=stamp_all, args=(i * 13,)) for i in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert wrong == []
