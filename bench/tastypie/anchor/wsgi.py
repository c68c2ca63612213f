import os

import anchor.compat  # noqa: F401  (before anything imports tastypie)
from django.core.wsgi import get_wsgi_application

os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'anchor.settings')
application = get_wsgi_application()
