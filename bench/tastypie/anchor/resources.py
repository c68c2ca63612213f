"""
Plain tastypie resources for the anchor: stock ModelResource, default paginator (meta.total_count
by count()), default serializer, no authentication (Cairn checks an API key on every request; the
anchor does not, so it is, if anything, favoured).
"""
from tastypie import fields
from tastypie.constants import ALL, ALL_WITH_RELATIONS
from tastypie.resources import ModelResource

from anchor.models import Cluster, StorageUser


class ClusterResource(ModelResource):
    class Meta:
        queryset = Cluster.objects.all().order_by('id')
        resource_name = 'clusters'
        allowed_methods = ['get']
        fields = ['id', 'name', 'uuid', 'auth_url', 'storage_url', 'region', 'created_at', 'updated_at']
        filtering = {'id': ALL, 'name': ALL, 'uuid': ALL}


class UserResource(ModelResource):
    cluster = fields.ToOneField(ClusterResource, 'cluster')
    user = fields.CharField(attribute='username')

    class Meta:
        # Ordered by id, as Cairn lists when no order_by is given. The clusters of a page are read in
        # one query after it (prefetch_related): without it, each row's cluster URI costs a query of
        # its own (page 1 about twice as slow); with select_related, the deep page joins every row it
        # skips (about twice as slow there).
        queryset = StorageUser.objects.prefetch_related('cluster').order_by('id')
        resource_name = 'users'
        allowed_methods = ['get']
        fields = ['id', 'is_superuser', 'enabled', 'created_at', 'updated_at']
        filtering = {
            'id': ALL,
            'cluster': ALL_WITH_RELATIONS,
            'user': ALL,
            'is_superuser': ALL,
            'enabled': ALL,
        }
        ordering = ['id', 'cluster', 'user', 'is_superuser', 'enabled']
        limit = 20
        max_limit = 1000
