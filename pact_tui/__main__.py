import sys

from pact_tui.launch import main

sys.exit(main())
