"""Changing a user's resources on approval: a fix named by its `fix_id`, read afresh, checked
against what AWS sells and the operator's guards, applied, and read back."""
