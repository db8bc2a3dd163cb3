"""The database: configuration and lifecycle, the migrations, the field types models share, the one facility for
statements the ORM cannot say, and group commit."""
