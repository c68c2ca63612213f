"""
Debian 12 ships django-tastypie 0.13.3 (written for Django 1.8-1.9) beside Django 3.2, and the two do
not import together: tastypie still uses names Django has since removed. This puts those names
back, each as the thing Django renamed it to, before tastypie is imported; tastypie's own code runs
unchanged. Imported first by settings.py.
"""
import sys

import six
import six.moves
import six.moves.urllib
import six.moves.urllib.parse
import django.urls
import django.utils
import django.utils.encoding
from django.db.models import Field
from django.db.models.sql import constants
from django.db.models.sql.query import Query
from django.db.models.fields.related import ForeignObjectRel

# django.utils.six (removed in Django 3.0): the six it vendored.
django.utils.six = six
sys.modules['django.utils.six'] = six
sys.modules['django.utils.six.moves'] = six.moves
sys.modules['django.utils.six.moves.urllib'] = six.moves.urllib
sys.modules['django.utils.six.moves.urllib.parse'] = six.moves.urllib.parse
# django.core.urlresolvers (removed in 2.0): moved to django.urls.
sys.modules['django.core.urlresolvers'] = django.urls
# python_2_unicode_compatible (removed in 3.0): a no-op on Python 3.
if not hasattr(django.utils.encoding, 'python_2_unicode_compatible'):
    django.utils.encoding.python_2_unicode_compatible = lambda cls: cls
# QUERY_TERMS (removed in 2.1): the lookups Django 2.0 still listed; tastypie checks filters against it.
if not hasattr(constants, 'QUERY_TERMS'):
    constants.QUERY_TERMS = {
        'exact', 'iexact', 'contains', 'icontains', 'gt', 'gte', 'lt', 'lte', 'in', 'startswith',
        'istartswith', 'endswith', 'iendswith', 'range', 'year', 'month', 'day', 'week_day', 'hour',
        'minute', 'second', 'isnull', 'search', 'regex', 'iregex',
    }
# Query.query_terms (removed in 2.1): the same list.
if not hasattr(Query, 'query_terms'):
    Query.query_terms = property(lambda self: constants.QUERY_TERMS)
# Field.rel (removed in 2.0): renamed remote_field; its .to became .model.
if not hasattr(Field, 'rel'):
    Field.rel = property(lambda self: self.remote_field)
if not hasattr(ForeignObjectRel, 'to'):
    ForeignObjectRel.to = property(lambda self: self.model)
