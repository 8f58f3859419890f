"""The bundled theme files, installed as the package ``pact_tui.bundled_themes`` (pyproject.toml
maps this folder to it); ``pact_tui.themes.bundled_themes_dir()`` finds them."""
