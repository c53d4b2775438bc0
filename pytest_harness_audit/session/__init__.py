"""What a test holds: the harness of one session, its workspace and its recording proxy."""
