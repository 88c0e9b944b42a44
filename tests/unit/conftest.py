"""The unit tier runs in this process only: no sockets, no other programs.

While a unit test (its set-up, its call and its teardown) runs, an audit hook refuses
to connect, bind or send on a socket and to start a process (``subprocess``,
``os.exec*``, ``os.posix_spawn``, ``os.system``, a pty): the call raises
:class:`UnitTierViolation`, and the test fails even if it caught that. Such a test
belongs in ``tests/integration/`` (see CONTRIBUTING.md).

``os.fork`` stays allowed: the generator itself formats large packages in forked
worker processes (``mcptasks_gen.fmt``), which run no other program.
"""

from __future__ import annotations

from tests.support.unit_guard import (  # noqa: F401  (hooks found by name)
    UnitTierViolation,
    pytest_runtest_call,
    pytest_runtest_setup,
    pytest_runtest_teardown,
)
