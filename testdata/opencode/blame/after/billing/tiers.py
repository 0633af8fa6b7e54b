"""Tiered unit prices for the billing service."""

from decimal import Decimal

TIERS = [
    (100, 0.10),
    (1000, 0.08),
    (10000, 0.06),
]

MINIMUM_CHARGE = Decimal("1.00")  # per invoice


def price_for(units):
    for limit, unit_price in TIERS:
        if units <= limit:
            return round(units * unit_price, 2)
    return units * TIERS[-1][1]
