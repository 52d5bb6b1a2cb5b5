//! The web plan in the loop (placeholder until the loop part lands).
