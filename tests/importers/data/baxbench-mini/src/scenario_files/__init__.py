from pathlib import Path

SCENARIO_FILE_PATH = Path(__file__).parent.absolute()
