from django.urls import include, path
from tastypie.api import Api

from anchor.resources import ClusterResource, UserResource

v1 = Api(api_name='v1')
v1.register(ClusterResource())
v1.register(UserResource())

urlpatterns = [path('api/', include(v1.urls))]
