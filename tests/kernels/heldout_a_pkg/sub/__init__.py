from . import act
