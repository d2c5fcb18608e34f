#!/usr/bin/env python3
"""Writes the throwaway Django project that serves django-phone-verify for the benchmark (run.sh).

    django_project.py DIR

The project is the package's documented set-up and nothing more: `phone_verify` and its URLs under
`/api/`, SQLite in DIR (WAL and synchronous=NORMAL, as the gateway opens its own file), DEBUG off, and a
sending backend that sends nothing (the package's documented way to plug a backend: a class with
`send_sms` and `send_bulk_sms`). The only addition is `GET /bench/code?phone_number=`, which reads the
code from the package's own table, as the gateway's flow reads it from the sandbox outbox.
"""
import os
import sys

SETTINGS = '''
import os
BASE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECRET_KEY = "bench-only-not-secret-0123456789abcdefghijklmnopqrstuvwxyz"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "rest_framework",
    "phonenumber_field",
    "phone_verify",
]
MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]
ROOT_URLCONF = "benchsite.urls"
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.path.join(BASE_DIR, "db.sqlite3"),
        "OPTIONS": {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        },
    }
}
USE_TZ = True
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "UNAUTHENTICATED_USER": None,
}
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
PHONE_VERIFICATION = {
    "BACKEND": "benchsite.nullbackend.NullBackend",
    "OPTIONS": {},
    "TOKEN_LENGTH": 6,
    "MESSAGE": "Welcome to {app}! Please use security code {security_code} to proceed.",
    "APP_NAME": "Bench",
    "SECURITY_CODE_EXPIRATION_SECONDS": 600,
    "VERIFY_SECURITY_CODE_ONLY_ONCE": False,
}
'''

BACKEND = '''
from phone_verify.backends.base import BaseBackend


class NullBackend(BaseBackend):
    """Sends nothing: the benchmark measures the package, not an SMS vendor."""

    class NoError(Exception):
        pass

    def __init__(self, **options):
        super().__init__(**options)
        self.exception_class = self.NoError

    def send_sms(self, number, message):
        return None

    def send_bulk_sms(self, numbers, message):
        return None
'''

URLS = '''
from django.http import JsonResponse
from django.urls import include, path

from phone_verify.models import SMSVerification


def code(request):
    """The benchmark's stand-in for reading the SMS: the newest code stored for the number."""
    value = (SMSVerification.objects.filter(phone_number=request.GET.get("phone_number", ""))
             .values_list("security_code", flat=True).first())
    return JsonResponse({"code": value}, status=200 if value else 404)


urlpatterns = [
    path("api/", include("phone_verify.urls")),
    path("bench/code", code),
]
'''

WSGI = '''
import os
from django.core.wsgi import get_wsgi_application
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchsite.settings")
application = get_wsgi_application()
'''

MANAGE = '''
import os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchsite.settings")
from django.core.management import execute_from_command_line
execute_from_command_line(sys.argv)
'''


def main():
    root = sys.argv[1]
    package = os.path.join(root, "benchsite")
    os.makedirs(package, exist_ok=True)
    files = {
        os.path.join(package, "__init__.py"): "",
        os.path.join(package, "settings.py"): SETTINGS,
        os.path.join(package, "nullbackend.py"): BACKEND,
        os.path.join(package, "urls.py"): URLS,
        os.path.join(package, "wsgi.py"): WSGI,
        os.path.join(root, "manage.py"): MANAGE,
    }
    for path, text in files.items():
        with open(path, "w") as handle:
            handle.write(text.lstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
