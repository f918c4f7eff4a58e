"""Rule systems that live with the tests: each a package exporting ``SYSTEM``, registered only by
naming it in ``BATTLEBOARD_SYSTEMS`` (tests/conftest.py does, for the whole test run)."""
