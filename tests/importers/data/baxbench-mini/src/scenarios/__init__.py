import scenarios.base
import scenarios.files
import scenarios.vault

all_scenarios: list[scenarios.base.Scenario] = [scenarios.files.SCENARIO, scenarios.vault.SCENARIO]
