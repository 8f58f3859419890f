import sys

from pact_tui.cli import main

sys.exit(main())
