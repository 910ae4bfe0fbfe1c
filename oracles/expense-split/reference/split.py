"""The two computations with exactly one right answer: a bill's shares and the settlement plan."""

from __future__ import annotations


def shares(amount: int, weights: dict[int, int]) -> dict[int, int]:
    """Split ``amount`` cents by weight: floor shares, then one leftover cent each by ascending member id."""
    total = sum(weights.values())
    ordered = sorted(weights)
    result = {member: amount * weights[member] // total for member in ordered}
    left = amount - sum(result.values())
    for member in ordered[:left]:
        result[member] += 1
    return result


def settlements(balances: dict[int, int]) -> list[dict[str, int]]:
    """Lowest-balance debtor pays highest-balance creditor (ties by lower id), until all are 0."""
    left = {member: balance for member, balance in balances.items() if balance != 0}
    plan: list[dict[str, int]] = []
    while left:
        debtor = min(left, key=lambda m: (left[m], m))
        creditor = min(left, key=lambda m: (-left[m], m))
        amount = min(-left[debtor], left[creditor])
        plan.append({"from_id": debtor, "to_id": creditor, "amount_cents": amount})
        left[debtor] += amount
        left[creditor] -= amount
        left = {member: balance for member, balance in left.items() if balance != 0}
    return plan
