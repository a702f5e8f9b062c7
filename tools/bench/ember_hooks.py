"""What a benchmark asks of Ember when Ember is loaded, and nothing when it is not."""
import ctypes


def flush():
    """ember_flush(): let the placement settle before a timed phase (a no-op without Ember)."""
    try:
        fn = ctypes.CDLL(None).ember_flush
    except (AttributeError, OSError):
        return
    fn()


def active():
    """ember_is_active(): whether Ember is loaded and placing (False without it)."""
    try:
        return bool(ctypes.CDLL(None).ember_is_active())
    except (AttributeError, OSError):
        return False
