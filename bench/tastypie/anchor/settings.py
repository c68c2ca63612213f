"""
Settings of the tastypie anchor: a minimal Django project serving plain django-tastypie over the
benchmark's own tables (see docs/benchmarks.md, management API). The benchmark gives the database in
CAIRN_ANCHOR_DATABASE_URL (postgres://user@host:port/name, no password: a trusted loopback server).
"""
import os
from urllib.parse import unquote, urlsplit

_db = urlsplit(os.environ['CAIRN_ANCHOR_DATABASE_URL'])

# Production-like: no debug (Django would keep every query of a request in memory with it on).
DEBUG = False
SECRET_KEY = 'cairn-bench-tastypie-anchor-not-a-secret'
ALLOWED_HOSTS = ['127.0.0.1', 'localhost']
ROOT_URLCONF = 'anchor.urls'
WSGI_APPLICATION = 'anchor.wsgi.application'
# tastypie's own app only holds models for API keys, which the anchor does not use.
INSTALLED_APPS = ['anchor']
# No middleware: the anchor is the API framework alone, nothing in front of it.
MIDDLEWARE = []
DATABASES = {
    'default': {
        'ENGINE': 'django.db.backends.postgresql',
        'NAME': _db.path.lstrip('/'),
        'USER': unquote(_db.username or 'postgres'),
        'PASSWORD': unquote(_db.password or ''),
        'HOST': _db.hostname or '127.0.0.1',
        'PORT': str(_db.port or 5432),
        # One connection per worker, kept across requests, as the API keeps its pool.
        'CONN_MAX_AGE': None,
    }
}
DEFAULT_AUTO_FIELD = 'django.db.models.BigAutoField'
USE_TZ = True
TIME_ZONE = 'UTC'
# Cairn's list pages: 20 objects unless asked, at most 1000.
API_LIMIT_PER_PAGE = 20
TASTYPIE_DEFAULT_FORMATS = ['json']
LOGGING = {'version': 1, 'disable_existing_loggers': False, 'root': {'level': 'WARNING'}}
