from __future__ import annotations

from django import forms


class EraseBuyerForm(forms.Form):
    email = forms.EmailField(label="Buyer's e-mail", max_length=254)
