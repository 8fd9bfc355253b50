"""Rendering helpers shared by the Streamlit pages (the pages themselves stay thin)."""
