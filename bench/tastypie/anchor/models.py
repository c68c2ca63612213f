"""
Unmanaged models over the management API's own tables (created by its migrations, never by Django):
only the columns of its first schema, so the anchor reads the same rows on any later schema.
"""
from django.db import models


class Cluster(models.Model):
    id = models.AutoField(primary_key=True)
    name = models.CharField(max_length=255, unique=True)
    uuid = models.UUIDField(unique=True)
    auth_url = models.TextField()
    storage_url = models.TextField()
    region = models.CharField(max_length=255)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        managed = False
        db_table = 'clusters'


class StorageUser(models.Model):
    id = models.BigAutoField(primary_key=True)
    cluster = models.ForeignKey(Cluster, db_column='cluster_id', on_delete=models.DO_NOTHING)
    username = models.CharField(max_length=255)
    is_superuser = models.BooleanField()
    enabled = models.BooleanField()
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        managed = False
        db_table = 'storage_users'
