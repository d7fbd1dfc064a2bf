"""Forms of the seller portal. No form ever carries a token."""

from __future__ import annotations

from django import forms
from django.contrib.auth.forms import AuthenticationForm


class SellerSignInForm(AuthenticationForm):
    """Django's sign-in form; staff sign in here too (LOGIN_URL) and land on the dashboard."""

    username = forms.CharField(
        max_length=150,
        widget=forms.TextInput(attrs={"autofocus": True, "autocomplete": "username"}),
    )


class ConnectionActionForm(forms.Form):
    """Disconnect posts the id of the connection it shows; it must be the seller's own."""

    connection_id = forms.IntegerField(min_value=1)
