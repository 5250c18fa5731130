"""Constraint families of the planning MILP, one module each (see ../shared/design/formulation.md)."""
