"""Browser control: finding, starting, resetting, watching and killing a worker's Chromium sessions."""
