"""What dashboard_check.py and manifests_test.py share: the skip exit status, the two
exceptions a check raises, and python3-yaml when it is installed (None when not: each script
then skips rather than fails, so both test the absence the same way)."""

try:
    import yaml
except ImportError:
    yaml = None

SKIPPED = 77  # ctest's SKIP_RETURN_CODE for both tests (tests/deploy/CMakeLists.txt)


class Failure(Exception):
    pass


class Skip(Exception):
    pass
