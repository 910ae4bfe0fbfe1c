"""What the harness needs from the machine it runs on, below every engine: local processes
(free ports, children that die with the harness, killing a process tree), readiness waits with
a deadline, and the platform's install commands for a missing engine."""
