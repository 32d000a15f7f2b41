"""Hypothesis strategies shared by the families' record property tests."""

from __future__ import annotations

from hypothesis import strategies as st

# any JSON value a record's free-form fields (extras, properties) may hold
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
