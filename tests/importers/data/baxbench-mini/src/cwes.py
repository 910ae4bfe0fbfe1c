from enum import Enum


class CWE(Enum):
    """
    CWE nums and descriptions (a subset, in BaxBench's format).
    """

    INSUFFICIENTLY_PROTECTED_CREDENTIALS = {
        "num": 522,
        "desc": "The product transmits or stores authentication credentials, but it uses an insecure method that is susceptible to unauthorized interception and/or retrieval.",
    }
    PATH_TRAVERSAL = {
        "num": 22,
        "desc": "The product uses external input to construct a pathname that is intended to identify a file or directory that is located underneath a restricted parent directory.",
    }
    IMPROPER_CHECK_OR_HANDLING_OF_EXCEPTIONAL_CONDITIONS = {
        "num": 703,
        "desc": "The product does not properly anticipate or handle exceptional conditions that rarely occur during normal operation of the product.",
    }
    UNCONTROLLED_RESOURCE_CONSUMPTION = {
        "num": 400,
        "desc": "The product does not properly control the allocation and maintenance of a limited resource.",
    }
